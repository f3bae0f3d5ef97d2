export const App = () => null
