using System.Buffers;
using System.Text.RegularExpressions;

namespace MuxWatch.Timeouts;

/// <summary>
/// Removes credentials from text before MuxWatch keeps or shows any of it: <c>password=</c>,
/// <c>user=</c> and similar options of a StackExchange.Redis configuration string, and the user
/// information of a <c>redis://user:password@host</c> address.
/// </summary>
/// <remarks>
/// Timeout messages do not carry credentials, but what people paste and log shippers post often has a
/// connection string in the same log line; a tool read during incidents must never echo it.
/// </remarks>
public static partial class SecretRedactor
{
    /// <summary>What a removed secret is replaced with.</summary>
    public const string Mask = "***";

    // Words every configuration secret contains: one vectorised scan spares most messages the regex.
    private static readonly SearchValues<string> OptionTelltales = SearchValues.Create(["pass", "pwd", "user"], StringComparison.OrdinalIgnoreCase);

    /// <summary>The text with every credential replaced by <see cref="Mask"/>.</summary>
    public static string Redact(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (text.AsSpan().IndexOfAny(OptionTelltales) >= 0)
        {
            text = ConfigurationSecret().Replace(text, m => m.Groups["name"].Value + "=" + Mask);
        }

        // User information needs an '@'; the client's help links ("https://...") have none.
        return text.Contains('@', StringComparison.Ordinal)
            ? UrlUserInfo().Replace(text, m => m.Groups["scheme"].Value + Mask + "@")
            : text;
    }

    // password=..., pwd=..., user=..., username=..., sslPassword=...: up to the next ',', ';', space or quote.
    [GeneratedRegex(@"(?<name>\b(?:password|pwd|passwd|user|username|sslpassword|authpassword)\b)\s*=\s*[^,;\s""']*", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant, matchTimeoutMilliseconds: 1000)]
    private static partial Regex ConfigurationSecret();

    // rediss://user:secret@host -> rediss://***@host
    [GeneratedRegex(@"(?<scheme>\b[a-z][a-z0-9+.\-]*://)[^/\s@]+@", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant, matchTimeoutMilliseconds: 1000)]
    private static partial Regex UrlUserInfo();
}
