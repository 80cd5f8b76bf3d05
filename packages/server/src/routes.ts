// The route table lives in routes/ (one file per area, routes/index.ts in order); this path
// stays for the code and tests that import it.
export { apiRoutes, HealthResponse } from './routes/index.js';
