/**
 * The smallest DOM that preact 10 renders into, for rendering <App> in plain Node (the repo has
 * no jsdom). It models nodes, attributes, text, and bubbling events — nothing about layout or
 * CSS. Good enough to assert on what the panel renders and what it posts when clicked.
 */

type Listener = (event: MiniEvent) => void;

export class MiniEvent {
  target: MiniNode | null = null;
  currentTarget: MiniNode | null = null;
  defaultPrevented = false;
  private stopped = false;
  constructor(
    readonly type: string,
    readonly bubbles = true,
  ) {}
  stopPropagation(): void {
    this.stopped = true;
  }
  preventDefault(): void {
    this.defaultPrevented = true;
  }
  get propagationStopped(): boolean {
    return this.stopped;
  }
}

export class MiniNode {
  parentNode: MiniElement | null = null;
  childNodes: MiniNode[] = [];
  private listeners = new Map<string, Set<Listener>>();

  constructor(readonly nodeType: number) {}

  get firstChild(): MiniNode | null {
    return this.childNodes[0] ?? null;
  }
  get lastChild(): MiniNode | null {
    return this.childNodes[this.childNodes.length - 1] ?? null;
  }
  get nextSibling(): MiniNode | null {
    if (!this.parentNode) return null;
    const siblings = this.parentNode.childNodes;
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }
  get previousSibling(): MiniNode | null {
    if (!this.parentNode) return null;
    const siblings = this.parentNode.childNodes;
    return siblings[siblings.indexOf(this) - 1] ?? null;
  }

  insertBefore(node: MiniNode, reference: MiniNode | null): MiniNode {
    if (node.parentNode) node.parentNode.removeChild(node);
    node.parentNode = this as unknown as MiniElement;
    const index = reference ? this.childNodes.indexOf(reference) : -1;
    if (index < 0) this.childNodes.push(node);
    else this.childNodes.splice(index, 0, node);
    return node;
  }
  appendChild(node: MiniNode): MiniNode {
    return this.insertBefore(node, null);
  }
  removeChild(node: MiniNode): MiniNode {
    const index = this.childNodes.indexOf(node);
    if (index >= 0) this.childNodes.splice(index, 1);
    node.parentNode = null;
    return node;
  }
  remove(): void {
    this.parentNode?.removeChild(this);
  }

  get textContent(): string {
    return this.childNodes.map((child) => child.textContent).join('');
  }
  set textContent(value: string) {
    for (const child of [...this.childNodes]) this.removeChild(child);
    if (value) this.appendChild(new MiniText(value));
  }

  addEventListener(type: string, listener: Listener): void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener);
  }
  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener);
  }
  dispatchEvent(event: MiniEvent): boolean {
    event.target = this;
    for (let node: MiniNode | null = this; node; node = event.bubbles ? node.parentNode : null) {
      event.currentTarget = node;
      for (const listener of [...(node.listeners.get(event.type) ?? [])]) listener.call(node, event);
      if (event.propagationStopped) break;
    }
    return !event.defaultPrevented;
  }
}

export class MiniText extends MiniNode {
  constructor(public data: string) {
    super(3);
  }
  override get textContent(): string {
    return this.data;
  }
  override set textContent(value: string) {
    this.data = value;
  }
  get nodeValue(): string {
    return this.data;
  }
}

export class MiniElement extends MiniNode {
  readonly attributes = new Map<string, string>();
  readonly style: Record<string, string> & { setProperty(key: string, value: string): void; cssText: string } = Object.assign(Object.create(null) as Record<string, string>, {
    cssText: '',
    setProperty(this: Record<string, string>, key: string, value: string) {
      this[key] = value;
    },
  });
  // Present so preact picks the lower-case DOM event names ("click", not "Click").
  onclick = null;
  onkeydown = null;
  oninput = null;
  onchange = null;
  onfocus = null;
  onblur = null;
  ontoggle = null;

  constructor(
    readonly localName: string,
    readonly namespaceURI: string | null = 'http://www.w3.org/1999/xhtml',
  ) {
    super(1);
  }

  get nodeName(): string {
    return this.localName.toUpperCase();
  }
  get tagName(): string {
    return this.nodeName;
  }

  setAttribute(name: string, value: unknown): void {
    this.attributes.set(name, String(value));
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  hasAttribute(name: string): boolean {
    return this.attributes.has(name);
  }
  removeAttribute(name: string): void {
    this.attributes.delete(name);
  }

  click(): void {
    if (this.hasAttribute('disabled')) return;
    this.dispatchEvent(new MiniEvent('click'));
  }

  /** Depth-first descendants matching `predicate`. */
  findAll(predicate: (element: MiniElement) => boolean): MiniElement[] {
    const out: MiniElement[] = [];
    const walk = (node: MiniNode) => {
      for (const child of node.childNodes) {
        if (child instanceof MiniElement) {
          if (predicate(child)) out.push(child);
          walk(child);
        }
      }
    };
    walk(this);
    return out;
  }
  byTestId(testId: string): MiniElement[] {
    return this.findAll((element) => element.getAttribute('data-testid') === testId);
  }
  oneByTestId(testId: string): MiniElement {
    const found = this.byTestId(testId);
    if (found.length !== 1) throw new Error(`expected one [data-testid=${testId}], found ${found.length}`);
    return found[0]!;
  }
}

export class MiniDocument extends MiniNode {
  readonly documentElement = new MiniElement('html');
  readonly head = new MiniElement('head');
  readonly body = new MiniElement('body');
  constructor() {
    super(9);
    this.documentElement.appendChild(this.head);
    this.documentElement.appendChild(this.body);
  }
  createElement(name: string): MiniElement {
    return new MiniElement(name.toLowerCase());
  }
  createElementNS(namespace: string | null, name: string): MiniElement {
    return new MiniElement(name, namespace);
  }
  createTextNode(data: string): MiniText {
    return new MiniText(String(data));
  }
}

/** Install a fresh `document` on globalThis; returns a restore function. */
export function installMiniDom(): { document: MiniDocument; restore(): void } {
  const g = globalThis as { document?: unknown };
  const previous = g.document;
  const document = new MiniDocument();
  g.document = document;
  return {
    document,
    restore() {
      if (previous === undefined) delete g.document;
      else g.document = previous;
    },
  };
}
