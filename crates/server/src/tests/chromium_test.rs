fn _placeholder() {}
