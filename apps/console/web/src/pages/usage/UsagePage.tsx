import { PageHeader } from '../../components/feedback';

export function UsagePage() {
  return <PageHeader title="Usage" />;
}
