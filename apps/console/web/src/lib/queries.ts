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

/**
 * Quota per USD 1 (option QuotaPerUnit). Signed-in pages render only once /api/status has answered
 * (RequireSession waits for it), so money is never converted at a guessed rate.
 */
export function useQuotaPerUnit(): number {
  const status = useStatus().data;
  if (!status) throw new Error('useQuotaPerUnit before GET /api/status answered: use it under RequireSession');
  return status.quota_per_unit;
}

/** What each priced model costs the user's group (GET /api/pricing). */
export function usePricing() {
  return useQuery({ queryKey: ['pricing'], queryFn: () => api.call('get /api/pricing'), staleTime: 60_000 });
}
