/**
 * Environment variables that change what a command loads or runs: the program found, the
 * libraries, modules, packages, start-up files, hooks and helper programs it takes, the data
 * files the C library reads. Under an allow-list none can be set by a caller nor named in an
 * operator's entry: with any of them, a fixed command line runs code the operator did not allow.
 *
 * Families, each with who reads it. Names are compared without regard to case: Windows and
 * npm read them so (`NPM_CONFIG_REGISTRY` is `npm_config_registry`), and refusing `ld_preload`
 * too costs nothing.
 */
interface GuardedFamily {
  /** The names, as a regular expression over the whole name (case-insensitive). */
  readonly names: RegExp;
  /** Names of the family that are left settable (they only tune output or encoding). */
  readonly except?: RegExp;
  /** Who reads them and what they change, for the refusal. */
  readonly reason: string;
}

const GUARDED_FAMILIES: readonly GuardedFamily[] = [
  { names: /^(PATH|PATHEXT|COMSPEC)$/i, reason: 'it picks the program that runs' },
  {
    names: /^(LD_\w*|DYLD_\w*)$/i,
    reason: 'the dynamic loader reads LD_* (glibc, musl) and DYLD_* (macOS): they load libraries into the command (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT)',
  },
  {
    // glibc's own list of variables it removes for setuid programs (unsecvars.h), MALLOC_* whole.
    names: /^(GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_\w*|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TMPDIR|TZDIR)$/i,
    reason: 'the C library reads it to load modules or data files, resolve host names, tune the loader or place files (glibc removes these for setuid programs)',
  },
  {
    names: /^(BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS[0-4]|IFS|CDPATH|GLOBIGNORE|PROMPT_COMMAND|ZDOTDIR|FPATH|BASH_FUNC_\w*)$/i,
    reason: 'shells read it: start-up files, options, word splitting and functions that run code in every shell the command starts',
  },
  {
    names: /^(HOME|USERPROFILE|APPDATA|LOCALAPPDATA|XDG_\w*)$/i,
    reason: "it places the configuration files the command and its tools load (~/.npmrc, ~/.gitconfig, Python's user site-packages)",
  },
  { names: /^(SHELL|EDITOR|VISUAL|PAGER|BROWSER|SSH_ASKPASS|SUDO_ASKPASS)$/i, reason: 'it names a program the command runs on its own behalf' },
  { names: /^NODE_\w*$/i, except: /^NODE_ENV$/i, reason: 'Node.js reads NODE_*: options, preloaded code, module paths, certificates' },
  {
    names: /^(npm_config_\w*|YARN_\w*|COREPACK_\w*|BUN_\w*|DENO_\w*)$/i,
    reason: 'npm, npx, pnpm, yarn, corepack, bun and deno read it: the registry, scripts and settings that choose the code they fetch and run',
  },
  {
    names: /^(PYTHON\w*|PIP_\w*|PIPX_\w*|UV_\w*|VIRTUAL_ENV)$/i,
    except: /^(PYTHONUNBUFFERED|PYTHONIOENCODING|PYTHONUTF8|PYTHONDONTWRITEBYTECODE|UV_THREADPOOL_SIZE)$/i,
    reason: 'Python, pip, pipx and uv read it: module paths, start-up code, warnings and breakpoint hooks that import modules, the index packages come from',
  },
  { names: /^(PERL\w*)$/i, reason: 'Perl reads PERL*: module paths, options (PERL5OPT), the debugger (PERL5DB), I/O layers' },
  { names: /^(RUBY\w*|GEM_\w*|BUNDLE_\w*)$/i, reason: 'Ruby, RubyGems and Bundler read it: options (RUBYOPT), load paths, gem paths, the Gemfile' },
  {
    names: /^(JAVA_\w*|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH)$/i,
    reason: 'the Java launcher reads it: options (agents, commands run on errors), the class path, the Java installation',
  },
  { names: /^(DOTNET_\w*|CORECLR_\w*|COMPLUS_\w*)$/i, reason: '.NET reads it: startup hooks, profilers, additional dependencies' },
  {
    names: /^(GOFLAGS|GOPROXY|GOSUMDB|GONOSUMDB|GONOSUMCHECK|GOINSECURE|GOPRIVATE|GONOPROXY|GOPATH|GOMODCACHE|GOROOT|GOTOOLCHAIN|GOENV|GOBIN|GOEXPERIMENT)$/i,
    reason: 'the go command reads it: build flags, the module proxy and checksum database, the toolchain',
  },
  {
    names: /^GIT_\w*$/i,
    except: /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$/i,
    reason: 'git reads GIT_*: configuration (GIT_CONFIG_*), hooks, the programs it runs (GIT_SSH_COMMAND, GIT_EXEC_PATH, GIT_PAGER), the repository',
  },
  { names: /^(DOCKER_\w*)$/i, reason: 'docker reads DOCKER_*: the daemon that runs containers, its configuration and credentials' },
  { names: /^(OPENSSL_\w*|SSL_CERT_FILE|SSL_CERT_DIR)$/i, reason: 'OpenSSL reads it: a configuration that loads engines and providers, the certificates trusted' },
  { names: /^(PHPRC|PHP_INI_SCAN_DIR|LUA_\w*)$/i, reason: 'PHP and Lua read it: configuration files and start-up code' },
];

/** Why `name` can never be set for a stdio MCP server under an allow-list, or undefined when it can be. */
export function guardedEnvReason(name: string): string | undefined {
  for (const family of GUARDED_FAMILIES) {
    if (family.names.test(name) && !family.except?.test(name)) return family.reason;
  }
  return undefined;
}
