namespace MuxWatch.Tool.Tests;

/// <summary>One in-memory sidecar shared by a test class, with small API limits so oversize cases stay cheap.</summary>
public sealed class InMemoryApiFixture : IDisposable
{
    public const int MaxBodyBytes = 64 * 1024;
    public const int MaxMessagesPerRequest = 50;

    public InMemorySidecar Sidecar { get; } = new(
        ("MuxWatch:Api:MaxBodyBytes", MaxBodyBytes.ToString(System.Globalization.CultureInfo.InvariantCulture)),
        ("MuxWatch:Api:MaxMessagesPerRequest", MaxMessagesPerRequest.ToString(System.Globalization.CultureInfo.InvariantCulture)));

    public void Dispose() => Sidecar.Dispose();
}
