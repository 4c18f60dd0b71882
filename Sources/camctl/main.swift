print("camctl: not yet")
