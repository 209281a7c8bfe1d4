namespace MuxWatch.Json;

/// <summary>
/// An HTTP refusal, as RFC 9457 problem details (<c>application/problem+json</c>), with the reason also
/// under <c>error</c>, the member earlier answers used. Every refusal of MuxWatch's endpoints is one.
/// </summary>
/// <param name="Type">A URI naming the problem type (the status's RFC 9110 section).</param>
/// <param name="Title">The status's name.</param>
/// <param name="Status">The HTTP status.</param>
/// <param name="Detail">Why, in words.</param>
/// <param name="Error">The same reason.</param>
public sealed record ProblemAnswer(string Type, string Title, int Status, string Detail, string Error)
{
    /// <summary>The content type problem details are sent with.</summary>
    public const string ContentType = "application/problem+json";

    /// <summary>The refusal with <paramref name="status"/> (named <paramref name="title"/>) for <paramref name="reason"/>.</summary>
    public static ProblemAnswer For(int status, string title, string reason) =>
        new("https://www.rfc-editor.org/rfc/rfc9110#status." + status.ToString(System.Globalization.CultureInfo.InvariantCulture), title, status, reason, reason);
}
