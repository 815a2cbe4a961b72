import { PageHeader } from '../../components/feedback';

export function SecurityPage() {
  return <PageHeader title="Security" />;
}
