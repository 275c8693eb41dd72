"""The error of a campaign folder that cannot be imported (its own module:
importer.py and campaign_texts.py both raise it)."""


class CampaignFormatError(ValueError):
    """A problem in an import file, with the file and line at fault."""

    def __init__(self, path, line, message):
        self.path, self.line, self.message = path, line, message
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")
