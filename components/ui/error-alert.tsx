/** An error the user can act on, announced when it appears. Renders nothing without a message. */
export function ErrorAlert({
  message,
  className = "",
}: {
  message: string | null;
  className?: string;
}) {
  if (!message) return null;
  return (
    <p
      role="alert"
      className={`rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ${className}`}
    >
      {message}
    </p>
  );
}
