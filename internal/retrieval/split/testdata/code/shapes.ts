// Shapes and their areas, with a registry keyed by kind.

export enum Kind {
  Circle = 'circle',
  Rect = 'rect',
}

export interface Shape {
  kind: Kind;
  area(): number;
}

type Point = { x: number; y: number };

namespace Geometry {
  export const EPSILON = 1e-9;
  export function distance(a: Point, b: Point): number {
    return Math.hypot(a.x - b.x, a.y - b.y);
  }
}

export class Circle implements Shape {
  readonly kind = Kind.Circle;
  constructor(private center: Point, private radius: number) {}
  area(): number {
    return Math.PI * this.radius ** 2;
  }
}

export class Rect implements Shape {
  readonly kind = Kind.Rect;
  constructor(private w: number, private h: number) {}
  area(): number {
    return this.w * this.h;
  }
}

const registry = new Map<Kind, (args: number[]) => Shape>();
let created = 0;

export function make(kind: Kind, ...args: number[]): Shape {
  const build = registry.get(kind);
  if (!build) {
    throw new Error(`no shape of kind ${kind}`);
  }
  created++;
  return build(args);
}

for (const k of [Kind.Circle, Kind.Rect]) {
  switch (k) {
    case Kind.Circle:
      registry.set(k, ([r]) => new Circle({ x: 0, y: 0 }, r));
      break;
    default:
      registry.set(k, ([w, h]) => new Rect(w, h));
  }
}
