import { PageHeader } from '../../components/feedback';

export function WalletPage() {
  return <PageHeader title="Wallet" />;
}
