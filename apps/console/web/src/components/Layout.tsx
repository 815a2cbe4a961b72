import { useEffect, useRef, useState } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router';
import { ROLE_ADMIN, useSession, useUser } from '../session/session-context';

const USER_LINKS = [
  { to: '/', label: 'Dashboard' },
  { to: '/keys', label: 'API keys' },
  { to: '/usage', label: 'Usage' },
  { to: '/wallet', label: 'Wallet' },
  { to: '/security', label: 'Security' },
  { to: '/notifications', label: 'Notifications' },
  { to: '/quick-start', label: 'Quick start' },
  { to: '/docs', label: 'API reference' },
];

const ADMIN_LINKS = [
  { to: '/admin/channels', label: 'Channels' },
  { to: '/admin/users', label: 'Users' },
  { to: '/admin/prices', label: 'Prices' },
  { to: '/admin/options', label: 'Options' },
  { to: '/admin/payments', label: 'Payments' },
  { to: '/admin/redemptions', label: 'Redemptions' },
];

/** The signed-in frame: header with the user and Sign out, navigation (a menu on phones), the page. */
export function Layout() {
  const user = useUser();
  const { signOut } = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  const [menuPath, setMenuPath] = useState(location.pathname);
  // Following a link closes the phone menu.
  if (menuPath !== location.pathname) {
    setMenuPath(location.pathname);
    setMenuOpen(false);
  }
  // Each page has its own title, and following a link moves the focus to the new page's content
  // (for screen readers and keyboards, as a page load would).
  const shownPath = useRef(location.pathname);
  useEffect(() => {
    const label = [...USER_LINKS, ...ADMIN_LINKS].find((entry) => entry.to === location.pathname)?.label;
    document.title = label ? `${label} · Modelgate` : 'Modelgate';
    if (shownPath.current !== location.pathname) {
      shownPath.current = location.pathname;
      document.getElementById('main')?.focus();
    }
  }, [location.pathname]);
  const link = ({ to, label }: { to: string; label: string }) => (
    <li key={to}><NavLink to={to} end={to === '/'}>{label}</NavLink></li>
  );

  return (
    <div className="shell">
      <a className="skip-link" href="#main">Skip to content</a>
      <header className="topbar">
        <span className="brand">Modelgate</span>
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <div className="user">
          <span className="muted">{user.display_name || user.username}</span>
          <button type="button" onClick={() => void signOut()}>Sign out</button>
        </div>
      </header>
      <nav id="main-nav" className={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Main">
        <ul>{USER_LINKS.map(link)}</ul>
        {user.role >= ROLE_ADMIN && (
          <>
            <h2 className="nav-heading">Admin</h2>
            <ul>{ADMIN_LINKS.map(link)}</ul>
          </>
        )}
      </nav>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
