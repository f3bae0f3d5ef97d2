export const routes = []
