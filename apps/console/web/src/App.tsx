import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { Loading } from './components/feedback';
import { RequireAdmin, RequireSession } from './components/guards';
import { Layout } from './components/Layout';
import { ChannelsPage } from './pages/admin/channels/ChannelsPage';
import { OptionsPage } from './pages/admin/options/OptionsPage';
import { PaymentsPage } from './pages/admin/payments/PaymentsPage';
import { PricesPage } from './pages/admin/prices/PricesPage';
import { RedemptionsPage } from './pages/admin/redemptions/RedemptionsPage';
import { UsersPage } from './pages/admin/users/UsersPage';
import { ForgotPasswordPage } from './pages/auth/ForgotPasswordPage';
import { RegisterPage } from './pages/auth/RegisterPage';
import { ResetPasswordPage } from './pages/auth/ResetPasswordPage';
import { SignInPage } from './pages/auth/SignInPage';
import { DashboardPage } from './pages/dashboard/DashboardPage';
import { QuickStartPage } from './pages/docs/QuickStartPage';
import { KeysPage } from './pages/keys/KeysPage';
import { SecurityPage } from './pages/security/SecurityPage';
import { NotificationsPage } from './pages/settings/NotificationsPage';
import { UsagePage } from './pages/usage/UsagePage';
import { WalletPage } from './pages/wallet/WalletPage';

// The API reference renderer is large: loaded only when its page is opened.
const DocsPage = lazy(() => import('./pages/docs/DocsPage').then((module) => ({ default: module.DocsPage })));

export function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignInPage />} />
      {/* Where a failed single sign-on lands (`/login?error=...`, docs/api.md 3.9.2). */}
      <Route path="/login" element={<SignInPage />} />
      <Route path="/register" element={<RegisterPage />} />
      <Route path="/forgot-password" element={<ForgotPasswordPage />} />
      {/* The link in a password reset mail (docs/api.md 3.9.1). */}
      <Route path="/reset" element={<ResetPasswordPage />} />
      <Route element={<RequireSession><Layout /></RequireSession>}>
        <Route index element={<DashboardPage />} />
        <Route path="keys" element={<KeysPage />} />
        <Route path="usage" element={<UsagePage />} />
        <Route path="wallet" element={<WalletPage />} />
        <Route path="security" element={<SecurityPage />} />
        <Route path="notifications" element={<NotificationsPage />} />
        <Route path="quick-start" element={<QuickStartPage />} />
        <Route path="docs" element={<Suspense fallback={<Loading what="the API reference" />}><DocsPage /></Suspense>} />
        <Route path="admin/channels" element={<RequireAdmin><ChannelsPage /></RequireAdmin>} />
        <Route path="admin/users" element={<RequireAdmin><UsersPage /></RequireAdmin>} />
        <Route path="admin/prices" element={<RequireAdmin><PricesPage /></RequireAdmin>} />
        <Route path="admin/options" element={<RequireAdmin><OptionsPage /></RequireAdmin>} />
        <Route path="admin/payments" element={<RequireAdmin><PaymentsPage /></RequireAdmin>} />
        <Route path="admin/redemptions" element={<RequireAdmin><RedemptionsPage /></RequireAdmin>} />
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

function NotFound() {
  return <p className="alert error" role="alert">There is no such page. Pick one from the menu.</p>;
}
