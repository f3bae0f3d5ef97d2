export function DatePicker() {}
