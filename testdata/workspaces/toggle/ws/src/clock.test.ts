test("clock", () => {})
