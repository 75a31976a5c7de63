/**
 * A component that skips its render while `same(previous, next)` holds for its props: preact's
 * own shouldComponentUpdate on the function component's instance, as preact/compat's `memo` does,
 * without importing compat (it rewrites props and events for React code on every vnode). Context
 * still reaches the inner component: preact re-renders a context's consumers past a skipped parent.
 */
import { h, type Component, type FunctionComponent } from 'preact';

export function memoBy<P extends object>(render: FunctionComponent<P>, same: (previous: Readonly<P>, next: Readonly<P>) => boolean): FunctionComponent<P> {
  function Memoized(this: Component<P>, props: P) {
    this.shouldComponentUpdate = (next: Readonly<P>) => !same(this.props, next);
    return h(render, props);
  }
  Memoized.displayName = `Memo(${render.displayName ?? render.name})`;
  return Memoized;
}
