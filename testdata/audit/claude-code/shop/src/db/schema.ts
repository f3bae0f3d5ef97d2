export const schema = {}
