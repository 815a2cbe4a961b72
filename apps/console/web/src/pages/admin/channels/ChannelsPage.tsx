import { PageHeader } from '../../../components/feedback';

export function ChannelsPage() {
  return <PageHeader title="Channels" />;
}
