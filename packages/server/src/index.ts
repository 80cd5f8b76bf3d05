export { type AppOptions, createApp, publicRoutes } from './app.js';
export { DEFAULT_BODY_LIMIT, readJsonBody } from './body.js';
export { STATUS_BY_CODE, toErrorResponse } from './errors.js';
export { buildOpenApi } from './openapi.js';
export { type ApiRoute, type RouteInput, type RouteKind, route } from './route.js';
export { apiRoutes } from './routes/index.js';
export { databasePath, openPlatform, type RunningServer, type ServerOptions, startServer } from './server.js';
