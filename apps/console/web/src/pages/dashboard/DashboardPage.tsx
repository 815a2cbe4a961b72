import { PageHeader } from '../../components/feedback';

export function DashboardPage() {
  return <PageHeader title="Dashboard" />;
}
