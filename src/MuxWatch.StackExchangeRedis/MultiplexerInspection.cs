using MuxWatch.Reading;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>What the client does not say outright about a multiplexer: whether it is disposed, and its configuration without secrets.</summary>
internal static class MultiplexerInspection
{
    /// <summary>
    /// The client has no public "is disposed": a disposed multiplexer still lists its endpoints and
    /// servers, but GetServer of its own endpoint throws "The specified endpoint is not defined"
    /// (measured on 2.6.90 and 3.4.35), which a live one never does.
    /// </summary>
    public static bool IsDisposed(IConnectionMultiplexer multiplexer)
    {
        if (multiplexer.IsConnected || multiplexer.GetEndPoints() is not [var first, ..])
        {
            return false;
        }

        try
        {
            multiplexer.GetServer(first);
            return false;
        }
        catch (Exception ex) when (ex is ArgumentException or ObjectDisposedException)
        {
            return true;
        }
    }

    /// <summary>The configuration string without the password (the caller redacts the user name too).</summary>
    public static string? DisplayConfiguration(IConnectionMultiplexer? multiplexer)
    {
        if (multiplexer is null)
        {
            return null;
        }

        try
        {
            // Configuration includes the password: parse it and write it back without.
            return ConfigurationOptions.Parse(multiplexer.Configuration).ToString(includePassword: false);
        }
        catch (ArgumentException)
        {
            return SecretRedactor.Redact(multiplexer.Configuration);
        }
    }

    /// <summary>Its endpoints for a log line: the first three, and how many more.</summary>
    public static string EndpointsOf(IConnectionMultiplexer multiplexer)
    {
        var endpoints = multiplexer.GetEndPoints();
        var shown = string.Join(", ", endpoints.Take(3).Select(EndpointText.Of));
        return endpoints.Length > 3 ? $"{shown} and {endpoints.Length - 3} more" : shown;
    }
}
