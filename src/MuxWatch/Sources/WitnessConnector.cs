using System.Net;
using System.Net.Security;
using System.Net.Sockets;

namespace MuxWatch.Sources;

/// <summary>
/// Makes the witness's connection to one address without blocking its thread: a non-blocking connect looked
/// at each tick (<see cref="Advance"/>), then the TLS handshake on sockets that time out. Only a host name's
/// resolution runs on the pool (an address needs none): a connect whose completion waited for a pool thread
/// would never finish while the app's pool is starved, exactly when the witness is needed. TCP, TLS, or a
/// Unix socket's path, as the app's client reaches the server.
/// </summary>
internal sealed class WitnessConnector(EndPoint address, string? tlsHost, TimeProvider time) : IDisposable
{
    /// <summary>How long a connect may take (the TLS handshake after it has its sockets' timeouts).</summary>
    internal static readonly TimeSpan ConnectTimeout = TimeSpan.FromSeconds(2);

    private Task<IPAddress[]>? _resolving;
    private Socket? _connecting;
    private long _connectStarted;

    /// <summary>True while a connect (or the name's resolution) is under way.</summary>
    public bool UnderWay => _connecting is not null || _resolving is not null;

    /// <summary>
    /// Starts a connect, or looks at the one under way: null while it is under way; else the connection made,
    /// the failure, or that this kind of address has no witness.
    /// </summary>
    public WitnessConnectOutcome? Advance()
    {
        if (_connecting is { } socket)
        {
            return PickUp(socket);
        }

        if (_resolving is { } resolving)
        {
            if (!resolving.IsCompleted)
            {
                return null;
            }

            _resolving = null;
            return resolving.IsCompletedSuccessfully && resolving.Result.Length > 0
                ? Start(new IPEndPoint(resolving.Result[0], ((DnsEndPoint)address).Port))
                : new WitnessConnectOutcome(null, resolving.Exception?.InnerException);
        }

        switch (address)
        {
            case IPEndPoint ip:
                return Start(ip);
            case DnsEndPoint dns when IPAddress.TryParse(dns.Host, out var literal):
                return Start(new IPEndPoint(literal, dns.Port));
            case DnsEndPoint dns:
                _resolving = Dns.GetHostAddressesAsync(dns.Host);
                return null;
            case UnixDomainSocketEndPoint path:
                return Start(path); // a server on this machine's socket file: the same PING, no TCP
            default:
                return new WitnessConnectOutcome(null, null, Unsupported: true);
        }
    }

    /// <inheritdoc />
    public void Dispose()
    {
        _connecting?.Dispose();
        _connecting = null;
    }

    /// <summary>Starts a non-blocking connect, looked at on the next ticks.</summary>
    private WitnessConnectOutcome? Start(EndPoint target)
    {
        var socket = target is UnixDomainSocketEndPoint
            ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified) { Blocking = false }
            : new Socket(target.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, Blocking = false };
        try
        {
            socket.Connect(target);
        }
        catch (SocketException ex) when (ex.SocketErrorCode is SocketError.WouldBlock or SocketError.InProgress)
        {
            // Under way: looked at each tick.
        }
        catch (SocketException ex)
        {
            socket.Dispose();
            return new WitnessConnectOutcome(null, ex);
        }

        _connecting = socket;
        _connectStarted = time.GetTimestamp();
        return null;
    }

    /// <summary>Picks up a connect that finished (or failed, or took too long); the TLS handshake then runs here, on sockets that time out.</summary>
    private WitnessConnectOutcome? PickUp(Socket socket)
    {
        Exception? failure = null;
        try
        {
            if (socket.Poll(0, SelectMode.SelectError))
            {
                failure = new SocketException((int)socket.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.Error)!);
            }
            else if (!socket.Poll(0, SelectMode.SelectWrite))
            {
                if (time.GetElapsedTime(_connectStarted) < ConnectTimeout)
                {
                    return null; // still under way
                }

                failure = new SocketException((int)SocketError.TimedOut);
            }
        }
        catch (SocketException ex)
        {
            failure = ex;
        }

        _connecting = null;
        if (failure is not null)
        {
            socket.Dispose();
            return new WitnessConnectOutcome(null, failure);
        }

        try
        {
            socket.Blocking = true;
            socket.ReceiveTimeout = 500;
            socket.SendTimeout = 500;
            Stream stream = new NetworkStream(socket, ownsSocket: true);
            if (tlsHost is { } host)
            {
                var tls = new SslStream(stream, leaveInnerStreamOpen: false);

                // Nothing secret is sent on this connection, only PING: see EndpointWitness's remarks.
#pragma warning disable CA5359 // the witness measures whether the server answers; it sends no credential to protect
                tls.AuthenticateAsClient(new SslClientAuthenticationOptions { TargetHost = host, RemoteCertificateValidationCallback = static (_, _, _, _) => true });
#pragma warning restore CA5359
                stream = tls;
            }

            socket.ReceiveTimeout = 200;
            return new WitnessConnectOutcome(new WitnessConnection(socket, stream), null);
        }
        catch (Exception ex) when (ex is IOException or SocketException or System.Security.Authentication.AuthenticationException)
        {
            socket.Dispose();
            return new WitnessConnectOutcome(null, ex);
        }
    }
}

/// <summary>What a connect came to: the connection, or the failure (null when unknown), or no witness for this kind of address.</summary>
internal sealed record WitnessConnectOutcome(WitnessConnection? Connection, Exception? Failure, bool Unsupported = false);

/// <summary>The witness's connection: its socket (watched for answers) and the stream PINGs go through (TLS or plain).</summary>
internal sealed record WitnessConnection(Socket Socket, Stream Stream) : IDisposable
{
    public void Dispose()
    {
        Stream.Dispose();
        Socket.Dispose();
    }
}
