// Tests read answers' JSON loosely typed: each assertion states the shape it expects.
interface Response {
  json(): Promise<any>;
}
