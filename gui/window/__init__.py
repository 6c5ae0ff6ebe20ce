"""The main window and its helpers: layout, actions and menus, starting a run, settings, file
actions, report opening, decisions, compare, zoo and script windows. Imports every gui layer
below it and core."""
