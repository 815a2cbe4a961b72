import { createApiReference } from '@scalar/api-reference';
import '@scalar/api-reference/style.css';
import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import { PageHeader } from '../../components/feedback';

/** The gateway's OpenAPI document (GET /api/openapi.json, generated from the request schemas), rendered by Scalar. */
export function DocsPage() {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!container.current) return;
    const reference = createApiReference(container.current, {
      url: '/api/openapi.json',
      // Everything local: no web fonts, telemetry, proxy or hosted AI agent from third parties.
      withDefaultFonts: false,
      agent: { disabled: true },
      telemetry: false,
      hideClientButton: true,
      hideDarkModeToggle: true,
      forceDarkModeState: 'light',
      showDeveloperTools: 'never',
      documentDownloadType: 'json',
      baseServerURL: window.location.origin,
    });
    return () => reference.destroy();
  }, []);
  return (
    <>
      <PageHeader title="API reference">
        <a href="/api/openapi.json" download="modelgate-openapi.json">Download openapi.json</a>
      </PageHeader>
      <p className="muted">
        Every <code>/api</code> operation of the console and the model surfaces under <code>/v1</code> and <code>/v1beta</code>.
        The <Link to="/quick-start">Quick start</Link> shows how to call them with a key.
      </p>
      <div ref={container} className="api-reference" />
    </>
  );
}
