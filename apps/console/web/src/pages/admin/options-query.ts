import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api } from '../../api';
import { parseOptions } from '@modelgate/schemas/options';

/**
 * Every option (root only, docs/api.md 3.4), for the Prices and Options pages; `values` are parsed,
 * defaults filled in. Invalidate ['options'] after a PUT /api/option.
 */
export function useOptions(enabled: boolean) {
  const query = useQuery({ queryKey: ['options'], queryFn: () => api.call('get /api/option'), enabled });
  const values = useMemo(() => (query.data ? parseOptions(query.data) : undefined), [query.data]);
  return { ...query, values };
}
