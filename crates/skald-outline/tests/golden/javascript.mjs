import x from "y";
export function exported(a) { return a; }
function* gen() { yield 1; }
class Animal extends Base {
  constructor(name) { super(); this.name = name; }
  speak() { return this.name; }
  static create() { return new Animal("x"); }
}
const arrow = (a) => a * 2;
const expr = function () {};
let notAFunction = 3;
export default class Widget { render() {} }
