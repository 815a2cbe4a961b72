import { type InputHTMLAttributes, type ReactNode, type Ref, type SelectHTMLAttributes, type TextareaHTMLAttributes, useId } from 'react';

interface FieldShellProps {
  label: string;
  /** Shown under the control and linked to it (aria-describedby). */
  hint?: ReactNode;
  /** A validation message; marks the control invalid. */
  error?: string;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ReactNode;
}

/** A label, a control and its hint or error, wired together for screen readers. */
function FieldShell({ label, hint, error, children }: FieldShellProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, describedBy, invalid: Boolean(error) })}
      {hint && <p className="hint" id={hintId}>{hint}</p>}
      {error && <p className="field-error" id={errorId}>{error}</p>}
    </div>
  );
}

type InputFieldProps = InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: ReactNode; error?: string };

/** A labelled input; with react-hook-form spread `register('name')` into it. */
export function InputField({ label, hint, error, ref, ...input }: InputFieldProps & { ref?: Ref<HTMLInputElement> }) {
  return (
    <FieldShell label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => <input id={id} ref={ref} aria-describedby={describedBy} aria-invalid={invalid || undefined} {...input} />}
    </FieldShell>
  );
}

type SelectFieldProps = SelectHTMLAttributes<HTMLSelectElement> & { label: string; hint?: ReactNode; error?: string };

export function SelectField({ label, hint, error, ref, children, ...select }: SelectFieldProps & { ref?: Ref<HTMLSelectElement> }) {
  return (
    <FieldShell label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <select id={id} ref={ref} aria-describedby={describedBy} aria-invalid={invalid || undefined} {...select}>{children}</select>
      )}
    </FieldShell>
  );
}

type TextAreaFieldProps = TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; hint?: ReactNode; error?: string };

export function TextAreaField({ label, hint, error, ref, ...textarea }: TextAreaFieldProps & { ref?: Ref<HTMLTextAreaElement> }) {
  return (
    <FieldShell label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => <textarea id={id} ref={ref} aria-describedby={describedBy} aria-invalid={invalid || undefined} {...textarea} />}
    </FieldShell>
  );
}

/** A labelled checkbox (label after the box, the whole line clickable). */
export function CheckboxField({ label, hint, ref, ...input }: Omit<InputFieldProps, 'type' | 'error'> & { ref?: Ref<HTMLInputElement> }) {
  const id = useId();
  return (
    <div className="field checkbox">
      <input id={id} type="checkbox" ref={ref} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      <label htmlFor={id}>{label}</label>
      {hint && <p className="hint" id={`${id}-hint`}>{hint}</p>}
    </div>
  );
}
