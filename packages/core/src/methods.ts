/**
 * The public methods of `AgentPlatform` are declared by each area beside its service
 * (`<area>/methods.ts`), as an object whose methods reach the service through `this`:
 * `publicMethods<{ projects: ProjectsService }>()({ createProject(caller, input) { ... } })`.
 * `installMethods` puts them on the class's prototype, where they behave as the class's own
 * methods (not enumerable; a subclass may override them).
 */
export function publicMethods<Services>() {
  return <const M extends object>(methods: M & ThisType<Services>): M => methods;
}

/** Defines each group's methods on `target.prototype`; a name defined twice is a bug, refused at load. */
export function installMethods(target: { readonly prototype: object }, ...groups: readonly object[]): void {
  for (const group of groups) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(group))) {
      if (Object.hasOwn(target.prototype, name)) throw new Error(`installMethods: ${name} is defined twice`);
      Object.defineProperty(target.prototype, name, { ...descriptor, enumerable: false });
    }
  }
}
