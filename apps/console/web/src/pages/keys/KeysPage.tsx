import { PageHeader } from '../../components/feedback';

export function KeysPage() {
  return <PageHeader title="API keys" />;
}
