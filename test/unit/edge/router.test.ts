import { Router } from '../../../actors/edge/router';

const h = () => ({});
function router() {
  return new Router()
    .add(['GET', 'POST'], '/_search', h)
    .add(['GET', 'POST'], '/{index}/_search', h)
    .add('DELETE', '/_pit', h)
    .add('DELETE', '/{index}', h)
    .add('PUT', '/{index}', h)
    .add('DELETE', '/_search/scroll/_all', h)
    .add('DELETE', '/_search/scroll/{scroll_id}', h);
}

describe('router', () => {
  it('prefers a literal segment over a parameter', () => {
    const m = router().match('DELETE', '/_pit');
    expect(m.kind === 'found' && m.route.pattern).toBe('/_pit');
    const all = router().match('DELETE', '/_search/scroll/_all');
    expect(all.kind === 'found' && all.route.pattern).toBe('/_search/scroll/_all');
  });

  it('captures decoded path parameters', () => {
    const m = router().match('GET', '/logs%2A/_search');
    expect(m.kind === 'found' && m.params).toEqual({ index: 'logs*' });
  });

  it('lists the allowed methods when only the method is wrong', () => {
    expect(router().match('GET', '/_pit')).toEqual({ kind: 'method', allowed: ['DELETE'] });
  });

  it('reports no handler for an unknown path', () => {
    expect(router().match('GET', '/a/b/c/d')).toEqual({ kind: 'none' });
  });

  it('never binds a first segment starting with _ to a parameter, except _all', () => {
    expect(router().match('GET', '/_msearch')).toEqual({ kind: 'none' });
    expect(router().match('GET', '/_foo/_search')).toEqual({ kind: 'none' });
    expect(router().match('PUT', '/_foo')).toEqual({ kind: 'none' });
    const all = router().match('GET', '/_all/_search');
    expect(all.kind === 'found' && all.params).toEqual({ index: '_all' });
    const later = new Router().add('GET', '/{index}/_doc/{id}', h).match('GET', '/books/_doc/_x');
    expect(later.kind === 'found' && later.params).toEqual({ index: 'books', id: '_x' });
  });
});
