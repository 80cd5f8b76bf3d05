import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './client';

/** The API of the signed-in key; provided by `App` around every screen below sign-in. */
export const ApiContext = createContext<Api | null>(null);
/** Signs the console out; provided by `App`. */
export const SignOutContext = createContext<(notice: string | null) => void>(() => {});

/** Signs the console out (the key is forgotten); `notice` is shown on the sign-in screen. */
export const useSignOut = () => useContext(SignOutContext);

/** The API of the signed-in key (every screen below sign-in has one). */
export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside of a signed-in console');
  return api;
}
