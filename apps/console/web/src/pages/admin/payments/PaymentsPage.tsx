import { PageHeader } from '../../../components/feedback';

export function PaymentsPage() {
  return <PageHeader title="Payment events" />;
}
