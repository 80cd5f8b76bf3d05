// Every package's `prepack`: packing with npm would leave the workspace's `workspace:*`
// dependency ranges in the tarball's package.json (npm cannot install that); `pnpm pack`
// replaces them with the packages' versions. So only pnpm may pack (README, "Use as a library").
const agent = process.env.npm_config_user_agent ?? '';
if (!agent.startsWith('pnpm/')) {
  console.error(
    `${process.env.npm_package_name ?? 'This package'}: Agent Platform's packages are packed with pnpm (\`pnpm pack\`). Their dependencies on each other are written "workspace:*", which pnpm replaces with versions when it packs and npm would leave as they are.`,
  );
  process.exit(1);
}
