/**
 * The fuzz's shape check (scripts/fuzzShape.ts): which 4xx bodies are Elasticsearch's, and how the
 * first answer of a raw exchange is cut out (content-length and chunked).
 */
import { esShaped4xx, firstAnswer } from '../../../scripts/fuzzShape';

describe('esShaped4xx', () => {
  it.each([
    ['an error object with type, reason and the status', 'POST', 400, '{"error":{"root_cause":[],"type":"parsing_exception","reason":"x"},"status":400}'],
    ['a string error with the status (unknown route, wrong method)', 'PUT', 405, '{"error":"Incorrect HTTP method for uri [/] and method [PUT], allowed: [GET]","status":405}'],
    ['the token API\'s OAuth2 error', 'POST', 400, '{"error":"invalid_grant","error_description":"token has already been refreshed"}'],
    ['a missing document', 'GET', 404, '{"_index":"i","_id":"1","found":false}'],
    ['a delete of a missing document', 'DELETE', 404, '{"_index":"i","_id":"1","result":"not_found","_shards":{}}'],
    ['a clear of contexts already gone', 'DELETE', 404, '{"succeeded":true,"num_freed":0}'],
    ['a token invalidation that found nothing', 'DELETE', 404, '{"invalidated_tokens":0,"previously_invalidated_tokens":0,"error_count":0}'],
    ['a missing security entity', 'GET', 404, '{}'],
    ['a health wait that timed out', 'GET', 408, '{"cluster_name":"c","status":"red","timed_out":true}'],
    ['a HEAD without a body', 'HEAD', 404, ''],
    ['an oversized body refused by the HTTP layer', 'POST', 413, ''],
  ])('takes %s', (_what, method, status, body) => {
    expect(esShaped4xx(method, status, body)).toBe(true);
  });

  it.each([
    ['an empty body', 'POST', 400, ''],
    ['text', 'POST', 400, 'Bad Request'],
    ['an error object without a reason', 'POST', 400, '{"error":{"type":"x"},"status":400}'],
    ['an error whose status differs from the answer\'s', 'POST', 400, '{"error":{"type":"x","reason":"y"},"status":500}'],
    ['an array', 'POST', 400, '[]'],
    ['an empty object on a 400', 'POST', 400, '{}'],
    ['a HEAD with a body', 'HEAD', 404, '{}'],
  ])('refuses %s', (_what, method, status, body) => {
    expect(esShaped4xx(method, status, body)).toBe(false);
  });
});

describe('firstAnswer', () => {
  it('cuts the first answer by its content-length, pipelined answers after it', () => {
    const raw = 'HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n\r\n';
    expect(firstAnswer(raw)).toEqual({ status: 400, body: '{}' });
  });
  it('joins a chunked body', () => {
    expect(firstAnswer('HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{"\r\n4\r\na":1\r\n1\r\n}\r\n0\r\n\r\n')).toEqual({ status: 404, body: '{"a":1}' });
  });
  it('waits for an answer still arriving', () => {
    expect(firstAnswer('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{"a"')).toBeUndefined();
    expect(firstAnswer('HTTP/1.1 200 OK\r\ncontent-le')).toBeUndefined();
  });
});
