export interface Shape {
  area(): number;
  name: string;
}
type Id = string | number;
enum Color { Red, Green }
export abstract class Base implements Shape {
  abstract area(): number;
  get name(): string { return "base"; }
}
namespace Geometry {
  export function distance(a: number, b: number): number { return a - b; }
}
declare function ambient(x: string): void;
export const handler = async (req: Request): Promise<void> => {};
