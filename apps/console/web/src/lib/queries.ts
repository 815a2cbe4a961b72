import { useQuery } from '@tanstack/react-query';
import { api } from '../api';

/** Public settings (quota per USD, registration, Stripe); they change rarely. */
export function useStatus() {
  return useQuery({ queryKey: ['status'], queryFn: () => api.call('get /api/status'), staleTime: 60_000 });
}

/** The signed-in user's profile with balance; invalidate ['self'] after anything that moves quota. */
export function useSelf() {
  return useQuery({ queryKey: ['self'], queryFn: () => api.call('get /api/user/self') });
}

/** Quota per USD 1; the default until /api/status has answered. */
export function useQuotaPerUnit(): number {
  return useStatus().data?.quota_per_unit ?? 500_000;
}
