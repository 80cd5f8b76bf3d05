import { createContext } from 'preact';
import { useContext, useMemo, useState } from 'preact/hooks';
import { Api } from './api/client';
import { Layout } from './components/layout';
import { ProjectScreen } from './screens/project';
import { ProjectsScreen } from './screens/projects';
import { SignIn } from './screens/sign-in';
import { forgetKey, storedKey, storeKey } from './session';
import { useRoute } from './router';

const ApiContext = createContext<Api | null>(null);

/** The API of the signed-in key (every screen below sign-in has one). */
export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside of a signed-in console');
  return api;
}

export function App() {
  const [key, setKey] = useState(storedKey);
  const [expired, setExpired] = useState(false);
  const route = useRoute();
  const signOut = (revoked: boolean) => {
    forgetKey();
    setExpired(revoked);
    setKey(null);
  };
  const api = useMemo(() => (key ? new Api(key, () => signOut(true)) : null), [key]);

  if (!api) {
    return (
      <SignIn
        expired={expired}
        onSignedIn={(k) => {
          storeKey(k);
          setExpired(false);
          setKey(k);
        }}
      />
    );
  }
  return (
    <ApiContext.Provider value={api}>
      <Layout route={route} onSignOut={() => signOut(false)}>
        {route.name === 'project' ? <ProjectScreen projectId={route.projectId} tab={route.tab} /> : <ProjectsScreen />}
      </Layout>
    </ApiContext.Provider>
  );
}
