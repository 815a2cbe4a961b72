import { PageHeader } from '../../components/feedback';

export function QuickStartPage() {
  return <PageHeader title="Quick start" />;
}
