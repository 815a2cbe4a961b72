import type { Response } from 'express';

/** Success envelope of docs/api.md 1.1. */
export function sendData(res: Response, data: unknown = null): void {
  res.json({ success: true, message: '', data });
}

/** A page asked for (`pageOf` of @modelgate/http): 1-based `page`, rows to skip and to take. */
export interface PageRequest {
  page: number;
  pageSize: number;
  skip: number;
}

export interface Page<T> {
  page: number;
  page_size: number;
  total: number;
  items: T[];
}
