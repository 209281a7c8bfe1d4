using System.Net;
using System.Net.Sockets;

namespace MuxWatch.Testing;

/// <summary>Free TCP ports on the loopback address.</summary>
public static class FreePort
{
    /// <summary>A port nothing listens on right now (the OS picks it).</summary>
    public static int Next()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        listener.Stop();
        return port;
    }
}
