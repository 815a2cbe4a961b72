import { PageHeader } from '../../../components/feedback';

export function PricesPage() {
  return <PageHeader title="Prices" />;
}
