// Bun imports a .proto file as its text (`with { type: "text" }`); this tells TypeScript so.
declare module "*.proto" {
  const text: string;
  export default text;
}
