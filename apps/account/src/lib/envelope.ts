import type { Response } from 'express';

/** Success envelope of CONTRACT 1.1. */
export function sendData(res: Response, data: unknown = null): void {
  res.json({ success: true, message: '', data });
}

export interface Page<T> {
  page: number;
  page_size: number;
  total: number;
  items: T[];
}
