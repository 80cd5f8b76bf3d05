import { useMemo, useState } from 'preact/hooks';
import { Api } from './api/client';
import { ApiContext, SignOutContext } from './api/context';
import { Layout } from './components/layout';
import { type Route, useRoute } from './router';
import { ApiKeysScreen } from './screens/account/api-keys';
import { CredentialsScreen } from './screens/account/credentials';
import { LocalModelsScreen } from './screens/account/local-models';
import { ProjectScreen } from './screens/project';
import { ProjectsScreen } from './screens/projects';
import { SignIn } from './screens/sign-in';
import { forgetKey, storedKey, storeKey } from './session';

/** What the sign-in screen says after a call was answered 401. */
const REFUSED = 'The key was refused (revoked or unknown): sign in again.';

export function App() {
  const [key, setKey] = useState(storedKey);
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();
  const signOut = (text: string | null) => {
    forgetKey();
    setNotice(text);
    setKey(null);
  };
  const api = useMemo(() => (key ? new Api(key, () => signOut(REFUSED)) : null), [key]);

  if (!api) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(k) => {
          storeKey(k);
          setNotice(null);
          setKey(k);
        }}
      />
    );
  }
  return (
    <ApiContext.Provider value={api}>
      <SignOutContext.Provider value={signOut}>
        <Layout route={route} onSignOut={() => signOut(null)}>
          <Screen route={route} />
        </Layout>
      </SignOutContext.Provider>
    </ApiContext.Provider>
  );
}

/** The screen of a route. */
function Screen({ route }: { route: Route }) {
  switch (route.name) {
    case 'project':
      return <ProjectScreen projectId={route.projectId} tab={route.tab} chatId={route.chatId} />;
    case 'credentials':
      return <CredentialsScreen />;
    case 'keys':
      return <ApiKeysScreen />;
    case 'local-models':
      return <LocalModelsScreen />;
    default:
      return <ProjectsScreen />;
  }
}
