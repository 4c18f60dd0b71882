import CameraControlTransport

/// Makes the event loop that ports and the actors using them share.
public enum EventLoops {
    /// A new event loop for ports (a ``PollEventLoop`` with a thread of its own named `name`) to share
    /// between the ports a component opens and the actors it runs (see `EventLoop`). Should no loop be
    /// possible (no file descriptor left for its wake-up pipe), a serial queue that runs jobs only: ports
    /// given it run on loops of their own.
    public static func make(name: String) -> any EventLoop {
        (try? PollEventLoop(name: name)) ?? SerialQueueEventLoop(name: name)
    }
}
