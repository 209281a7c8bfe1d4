namespace MuxWatch.StackExchangeRedis;

/// <summary>Multiplexer names: they become label values, so they are short and plain.</summary>
internal static class Names
{
    public static bool IsValid(string name) =>
        name.Length is > 0 and <= 64 && name.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-');
}
