/** What `run` throws (undefined when it returns), so a test can assert on the error's class and fields. */
export function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  return undefined;
}
