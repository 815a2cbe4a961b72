import { PageHeader } from '../../../components/feedback';

export function UsersPage() {
  return <PageHeader title="Users" />;
}
