import { PageHeader } from '../../../components/feedback';

export function OptionsPage() {
  return <PageHeader title="Options" />;
}
