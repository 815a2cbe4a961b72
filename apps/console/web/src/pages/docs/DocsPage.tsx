import { PageHeader } from '../../components/feedback';

export function DocsPage() {
  return <PageHeader title="API reference" />;
}
